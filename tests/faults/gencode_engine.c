/*
 * A stand-in for MegEngine's libmegengine_shared.so in a wheel made by the
 * tests: nothing but the string of -gencode flags a CUDA 11.8 build of
 * MegEngine 1.13 carries (MGE_CUDA_GENCODE), in .rodata where the real
 * library keeps it.
 */
const char mge_cuda_gencode[] =
    " -gencode arch=compute_61,code=sm_61 -gencode arch=compute_70,code=sm_70"
    " -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80"
    " -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89"
    " -gencode arch=compute_89,code=compute_89";
