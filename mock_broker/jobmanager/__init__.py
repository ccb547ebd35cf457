"""The model of flux-core 0.88's job-manager side of RFC 27: the queue,
alloc and free, hello, annotations and housekeeping."""
