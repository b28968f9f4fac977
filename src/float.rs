//! The small `Float` trait: f32 for training, f64 for gradient checking.
use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// What the engine needs of a scalar; implemented for `f32` and `f64` only.
pub trait Float:
    Copy
    + Send
    + Sync
    + Debug
    + Display
    + Default
    + PartialOrd
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Sum
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Negative infinity (the identity of `max`).
    const NEG_INFINITY: Self;
    /// Rounds an f64 to this type.
    fn from_f64(x: f64) -> Self;
    /// Widens to f64.
    fn to_f64(self) -> f64;
    /// `e^x`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `x^p`.
    fn powf(self, p: Self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// The larger of the two.
    fn max(self, o: Self) -> Self;
    /// Neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// `C = alpha * A B + beta * C` for row/column strides (so transposes cost nothing).
    ///
    /// # Safety
    /// The pointers and strides must describe valid m×k, k×n and m×n matrices, `c` writable.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: *const Self,
        rsa: isize,
        csa: isize,
        b: *const Self,
        rsb: isize,
        csb: isize,
        beta: Self,
        c: *mut Self,
        rsc: isize,
        csc: isize,
    );
    /// `C = A B + beta C` for small products whose B and C rows are contiguous (the
    /// attention's per-head GEMMs): f32 runs the unpacked kernel of [`crate::small_gemm`],
    /// f64 (gradient checks) the packing GEMM above.
    ///
    /// # Safety
    /// As [`crate::small_gemm::sgemm_rows`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_rows(
        mkn: (usize, usize, usize),
        a: *const Self,
        a_strides: (usize, usize),
        b: *const Self,
        rsb: usize,
        beta: Self,
        c: *mut Self,
        rsc: usize,
    );
}

macro_rules! impl_float {
    ($t:ty, $gemm:path, $exp:path, $gemm_rows:path) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn exp(self) -> Self {
                $exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn powf(self, p: Self) -> Self {
                <$t>::powf(self, p)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn max(self, o: Self) -> Self {
                <$t>::max(self, o)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            unsafe fn gemm(
                m: usize,
                k: usize,
                n: usize,
                a: *const Self,
                rsa: isize,
                csa: isize,
                b: *const Self,
                rsb: isize,
                csb: isize,
                beta: Self,
                c: *mut Self,
                rsc: isize,
                csc: isize,
            ) {
                // SAFETY: forwarded from the caller's contract.
                unsafe { $gemm(m, k, n, 1.0, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc) }
            }
            unsafe fn gemm_rows(
                mkn: (usize, usize, usize),
                a: *const Self,
                a_strides: (usize, usize),
                b: *const Self,
                rsb: usize,
                beta: Self,
                c: *mut Self,
                rsc: usize,
            ) {
                // SAFETY: forwarded from the caller's contract.
                unsafe { $gemm_rows(mkn, a, a_strides, b, rsb, beta, c, rsc) }
            }
        }
    };
}

impl_float!(
    f32,
    matrixmultiply::sgemm,
    exp_f32,
    crate::small_gemm::sgemm_rows
);
impl_float!(f64, matrixmultiply::dgemm, f64::exp, dgemm_rows);

/// f64's `gemm_rows`: the packing GEMM with unit column strides.
#[allow(clippy::too_many_arguments)]
unsafe fn dgemm_rows(
    (m, k, n): (usize, usize, usize),
    a: *const f64,
    (rsa, csa): (usize, usize),
    b: *const f64,
    rsb: usize,
    beta: f64,
    c: *mut f64,
    rsc: usize,
) {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a,
            rsa as isize,
            csa as isize,
            b,
            rsb as isize,
            1,
            beta,
            c,
            rsc as isize,
            1,
        )
    }
}

/// `e^x` in f32 without a libm call: branch-free, so loops over slices vectorise.
///
/// Softmax and GELU spend most of their time in exp, and libm's `expf` is an opaque call per
/// element. This is the Cephes single-precision scheme: x = n ln2 + r with |r| <= ln2/2 (ln2 split
/// in two constants so n ln2 is exact), a degree-6 polynomial for e^r, and 2^n built in the
/// exponent bits. Within [-87.3, 88.3] it is within 2 ulp of the correctly rounded value (checked
/// against f64 in the tests). Below -87.3 it returns 0 (libm returns subnormals down to -103.9),
/// above 88.37 it returns +inf (libm: 88.72), and NaN stays NaN. f64, used for gradient checks,
/// keeps libm's exp.
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const LO: f32 = -87.336_55;
    const HI: f32 = 88.376_26;
    // Adding 1.5 * 2^23 rounds to the nearest integer and leaves it in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let xc = x.clamp(LO, HI);
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let y = p * (r * r) + r + 1.0;
    let bits = (t.to_bits() as i32 - ROUND.to_bits() as i32 + 127) << 23;
    let e = y * f32::from_bits(bits as u32);
    if x.is_nan() {
        x
    } else if x < LO {
        0.0
    } else if x > HI {
        f32::INFINITY
    } else {
        e
    }
}
