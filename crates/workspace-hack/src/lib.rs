//! No code. Its Cargo.toml turns on, for a build of the programs alone,
//! the features of shared crates that the test build turns on through the
//! tests' dev-dependencies, so that the two builds compile those crates
//! once, not twice (its Cargo.toml says which and why).
