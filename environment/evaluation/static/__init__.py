"""Stage 1, in the calling (API) process before anything runs: the AST checks, the kernel language, the
runtime features the sandbox does not offer."""
