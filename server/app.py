"""Entry point `openenv validate` looks for: re-exports the Space's app and main()."""
from app import app, main  # noqa: F401


if __name__ == "__main__":
    main()
