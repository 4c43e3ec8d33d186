//! The rates a page can draw. Its own file, with nothing to import, so
//! that the readers of outside files (saved runs, netperf's logs) and their
//! tests share the one bound.

/// The largest rate a page draws: far beyond any network (10^15 units a
/// second), and far enough below f64's end that the charts' pixel
/// arithmetic cannot overflow. A rate from a file outside 0..=this (a
/// saved run, a netperf log) is refused where the file is read.
pub const MAX_RATE: f64 = 1e15;

/// Whether `rate` is one a page can draw.
pub fn is_drawable_rate(rate: f64) -> bool {
    (0.0..=MAX_RATE).contains(&rate)
}
