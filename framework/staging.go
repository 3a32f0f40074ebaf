package framework

// StagesCopies reports whether the framework copies a host array into a
// pinned buffer of its own before it copies it to the device: then every
// host-to-device copy the trace shows comes from pinned memory whatever
// memory the program's arrays are in, and the copy into the staging
// buffer is CPU work outside every CUDA call. XLA does so for
// jax.device_put of a NumPy array (an array in memory_kind="pinned_host"
// memory it copies without staging); PyTorch and CuPy copy from the
// program's own buffer, which the trace shows as pageable when it is.
func StagesCopies(n Name) bool { return n == JAX }
