// The unit ball (volume 4/3 pi): one physical volume, its sphere as a group.
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};
Physical Volume("ball", 1) = {1};
Physical Surface("sphere", 2) = {1};
Mesh.CharacteristicLengthMax = 0.2;
