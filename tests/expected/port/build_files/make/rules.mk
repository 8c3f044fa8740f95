# included by Makefile
DEVICE_FLAGS = -fgpu-rdc -fgpu-rdc -c
CC_FLAGS = -O2 -march=native -arch x86_64
