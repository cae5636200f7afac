// One field operation per kernel, for counting SASS instructions of the
// portable and even/odd functions (make sass; nothing here is run).
#include "../field.cuh"

using namespace c2;

#define C2_SASS_KERNEL(name, F, expr)                                          \
    __global__ void name(F* out, const F* in) {                                \
        const F a = in[threadIdx.x], b = in[threadIdx.x + blockDim.x];         \
        (void)b;                                                               \
        out[threadIdx.x] = expr;                                               \
    }

C2_SASS_KERNEL(k_fp_portable, fp_t, fp_t::mul_portable(a, b))
C2_SASS_KERNEL(k_fp_eo, fp_t, fp_t::mul_eo(a, b))
C2_SASS_KERNEL(k_fp_sqr_eo, fp_t, fp_t::sqr_eo(a))
C2_SASS_KERNEL(k_fp_default, fp_t, a * b)
C2_SASS_KERNEL(k_fp_add_portable, fp_t, fp_t::add_portable(a, b))
C2_SASS_KERNEL(k_fp_add_eo, fp_t, fp_t::add_eo(a, b))
C2_SASS_KERNEL(k_fp_sub_portable, fp_t, fp_t::sub_portable(a, b))
C2_SASS_KERNEL(k_fp_sub_eo, fp_t, fp_t::sub_eo(a, b))
C2_SASS_KERNEL(k_fp_neg_portable, fp_t, fp_t::neg_portable(a))
C2_SASS_KERNEL(k_fp_neg_eo, fp_t, fp_t::neg_eo(a))
C2_SASS_KERNEL(k_fr_portable, fr_t, fr_t::mul_portable(a, b))
C2_SASS_KERNEL(k_fr_eo, fr_t, fr_t::mul_eo(a, b))
C2_SASS_KERNEL(k_fr_sqr_eo, fr_t, fr_t::sqr_eo(a))
C2_SASS_KERNEL(k_fr_default, fr_t, a * b)
