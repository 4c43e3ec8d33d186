//! Output: the classic netperf result blocks, banners, units and warnings.
