# Cross build for 64-bit Arm with Debian's gcc-aarch64-linux-gnu and the
# arm64 libraries installed through multiarch (make test-arm installs both);
# tests run under qemu-user:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# -march=native means nothing for another machine: the neon variant only
set(HPMG_NATIVE OFF CACHE BOOL "Optimize for the build machine (-march=native)")
