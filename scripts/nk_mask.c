/* Hide CPU features from usearch's kernels (NumKong), to measure the HNSW rule as a CPU without them
   would run it (scripts/hnsw_rule.py's docstring): usearch asks NumKong's nk_capabilities() which
   SIMD families the CPU has; preloaded, this answers the real set ANDed with $NK_MASK.

   gcc -O2 -shared -fPIC -o /tmp/libnkmask.so scripts/nk_mask.c -ldl
   NK_MASK=0x5 LD_PRELOAD=/tmp/libnkmask.so python scripts/hnsw_rule.py grid ...

   The bits are NumKong 7.8's (serial 0x1, haswell 0x4, skylake 0x8, icelake 0x80, genoa 0x100 on an
   AMD EPYC with AVX-512 bf16): 0x5 leaves serial and haswell, the AVX2 kernels. The grid records the
   kernels usearch picked (usearch_kernels), so a wrong mask shows in the file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

typedef unsigned long long nk_capability_t;

nk_capability_t nk_capabilities(void) {
    static nk_capability_t (*real)(void) = 0;
    if (!real) real = (nk_capability_t (*)(void))dlsym(RTLD_NEXT, "nk_capabilities");
    nk_capability_t caps = real ? real() : 1;
    const char *mask = getenv("NK_MASK");
    return mask ? caps & strtoull(mask, 0, 0) : caps;
}
