# Top-level build helpers. Go code builds with plain `go build`.

# cuda builds gpu/cuda/libc2cuda.so (needs nvcc), loaded by c2 at run time.
.PHONY: cuda
cuda:
	$(MAKE) -C gpu/cuda
