"""Process plumbing: where an evaluation runs (local pool, Ray), the zygote that forks it, the children it
forks, the frames and typed protocol between them, and the sandbox layers a child enters."""
