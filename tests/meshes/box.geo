// The box [0,1] x [0,2] x [0,3] (volume 6) with one physical volume and two
// physical surface groups: the bottom face z = 0 and the five others.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 2, 3};
Physical Volume("domain", 7) = {1};
Physical Surface("bottom", 11) = {5};
Physical Surface("walls", 12) = {1, 2, 3, 4, 6};
Mesh.CharacteristicLengthMax = 0.4;
