// Per-thread bodies of the fixed-base scalar multiplication (setup.cu),
// generic over the group and callable on the host, so that
// hosttest/fixedbase_test.cc can run them without a GPU.
//
// A table of W windows (widths c_w and offsets o_w of digits.cuh) holds
// nb = 2^(c_0 - 1) entries per window: entry w·nb + d - 1 = d·2^(o_w)·G for
// d in [1, 2^(c_w - 1)], zero past a narrower window's magnitudes.
#pragma once
#include "digits.cuh"
#include "ec.cuh"

namespace c2 {

// Window bases 2^(o_w)·G for w < W into wb (host or device, one thread):
// W - 1 runs of doublings and W affine conversions. Returns false when a
// base is infinity (G of small order or infinity itself).
template <class F>
C2_HD bool fb_window_bases(const affine_t<F>& g, int W, affine_t<F>* wb) {
    if (g.is_inf()) return false;
    wb[0] = g;
    for (int w = 1; w < W; w++) {
        xyzz_t<F> p = xyzz_t<F>::from_affine(wb[w - 1]);
        for (int i = 0; i < window_width(w - 1, W); i++) p = p.dbl();
        if (p.is_inf()) return false;
        wb[w] = p.to_affine();
    }
    return true;
}

// Entry t = w·nb + d - 1 of the table: d·bases[w] by double-and-add from d's
// top bit, in affine form (one Fermat inversion: tables are small next to
// a key), or zero past window w's magnitudes.
template <class F>
C2_HD affine_t<F> fb_table_entry(const affine_t<F>* bases, int W, uint32_t nb, uint64_t t) {
    const int w = (int)(t / nb);
    const uint32_t d = (uint32_t)(t % nb) + 1;
    if (d > (1u << (window_width(w, W) - 1))) return {F::zero(), F::zero()};
    const affine_t<F> b = bases[w];
    xyzz_t<F> acc = xyzz_t<F>::from_affine(b);
    int top = 31;
    while (!((d >> top) & 1)) top--;
    for (int i = top - 1; i >= 0; i--) {
        acc = acc.dbl();
        if ((d >> i) & 1) acc = acc.add_affine(b);
    }
    return acc.to_affine();
}

// Thread t of T: out[i] = scalars[i]·G for the i = j·T + t < n, j < m. Each
// XYZZ result is parked (X, Y in out[i], ZZ and ZZZ in scratch at i) with
// the running product of the non-zero ZZZs (pre at i); one Fermat inversion
// of the whole product, then a backward walk peels off each 1/ZZZ
// (Montgomery's batch inversion) and writes the affine point. Scratch holds
// at least n elements each.
template <class F>
C2_HD void fb_thread(const affine_t<F>* table, int W, uint32_t nb, const fr_t* scalars, uint64_t n, uint32_t T, int m,
                     uint32_t t, affine_t<F>* out, F* zz_s, F* zzz_s, F* pre_s) {
    F run = F::one();
    int cnt = 0;
    for (int j = 0; j < m; j++) {
        const uint64_t i = (uint64_t)j * T + t;
        if (i >= n) break;
        const fr_t s = scalars[i].from_mont();
        xyzz_t<F> acc = xyzz_t<F>::inf();
        uint32_t carry = 0;
        for (int w = 0; w < W; w++) {
            bool neg;
            const uint32_t d = signed_digit(s.v, w, W, carry, neg);
            if (d == 0) continue;
            affine_t<F> q = table[(size_t)w * nb + d - 1];
            if (neg) q.y = q.y.neg();
            acc = acc.add_affine(q);
        }
        out[i].x = acc.x;
        out[i].y = acc.y;
        zz_s[i] = acc.zz;
        zzz_s[i] = acc.zzz;
        if (!acc.is_inf()) run = run * acc.zzz;
        pre_s[i] = run;
        cnt = j + 1;
    }
    if (cnt == 0) return;
    F inv = run.inverse();  // 1 / (product of the non-zero ZZZs)
    for (int j = cnt - 1; j >= 0; j--) {
        const uint64_t i = (uint64_t)j * T + t;
        const F zz = zz_s[i];
        if (zz.is_zero()) {
            out[i] = {F::zero(), F::zero()};
            continue;
        }
        const F zzz = zzz_s[i];
        const F izzz = j > 0 ? inv * pre_s[i - T] : inv;
        inv = inv * zzz;
        const F izz = (izzz * zz).sqr();  // 1/z^2 = 1/zz
        const affine_t<F> p = out[i];
        out[i] = {(p.x * izz).canonical(), (p.y * izzz).canonical()};
    }
}

}  // namespace c2
