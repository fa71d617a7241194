//! GPU benchmark kernels, the worker protocol and verdicts.
//!
//! Empty for now: the benchmark work (issue "Benchmarks") fills it. Nothing here runs yet, and the
//! CLI offers no `bench` command until it does.
