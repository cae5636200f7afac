// One field operation per kernel, for counting SASS instructions of the
// portable and even/odd functions, and of the fused a*b +- c*d against two
// products (make sass; nothing here is run).
#include "../field.cuh"
#include "../field_shoup.cuh"

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
// a*b + c*d and a*b - c*d: the fused product against two products
#define C2_SASS_KERNEL4(name, F, expr)                                         \
    __global__ void name(F* out, const F* in) {                                \
        const F a = in[threadIdx.x], b = in[threadIdx.x + blockDim.x];         \
        const F c = in[threadIdx.x + 2 * blockDim.x];                          \
        const F d = in[threadIdx.x + 3 * blockDim.x];                          \
        out[threadIdx.x] = expr;                                               \
    }
C2_SASS_KERNEL4(k_fp_prod_sum_eo, fp_t, fp_t::prod_sum_eo(a, b, c, d))
C2_SASS_KERNEL4(k_fp_two_eo, fp_t, fp_t::add_eo(fp_t::mul_eo(a, b), fp_t::mul_eo(c, d)))
C2_SASS_KERNEL4(k_fp_prod_diff_eo, fp_t, fp_t::prod_sum_eo(a, b, fp_t::neg_eo(c), d))
C2_SASS_KERNEL4(k_fp_two_diff_eo, fp_t, fp_t::sub_eo(fp_t::mul_eo(a, b), fp_t::mul_eo(c, d)))
C2_SASS_KERNEL4(k_fr_prod_sum_eo, fr_t, fr_t::prod_sum_eo(a, b, c, d))
C2_SASS_KERNEL4(k_fr_two_eo, fr_t, fr_t::add_eo(fr_t::mul_eo(a, b), fr_t::mul_eo(c, d)))
// a*w by a multiplier known ahead (Shoup, field_shoup.cuh) against k_fr_eo
__global__ void k_fr_shoup(fr_t* out, const fr_t* in, const shoup_t<FrParams>* tw) {
    out[threadIdx.x] = mul_shoup<FrParams>(in[threadIdx.x], tw[threadIdx.x]);
}
