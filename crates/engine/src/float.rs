//! The small `Float` trait: f32 for training, f64 for gradient checking. It is a scalar trait
//! on top of [`Kernels`] (the slice and matrix kernels of each type, and its zero), which knows
//! nothing of it: the kernels sit below the scalar, never beside it.
use crate::kernels::Kernels;
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
    + Kernels
{
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
}

macro_rules! impl_float {
    ($t:ty, $exp:path) => {
        impl Float for $t {
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
        }
    };
}

impl_float!(f32, crate::kernels::exp_f32);
impl_float!(f64, f64::exp);
