//! The normalized test description.
