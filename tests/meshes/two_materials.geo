// Two unit cubes side by side ([0,1]^3 and [1,2] x [0,1]^2) meshed
// conformingly across x = 1: two physical volumes of volume 1 each.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Box(2) = {1, 0, 0, 1, 1, 1};
Coherence;
Physical Volume("left", 21) = {1};
Physical Volume("right", 22) = {2};
Physical Surface("outer x=0", 31) = Surface In BoundingBox{-0.1, -0.1, -0.1, 0.1, 1.1, 1.1};
Mesh.CharacteristicLengthMax = 0.25;
