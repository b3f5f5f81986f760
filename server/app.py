"""Entry point `openenv validate` looks for: the Space's app and a main() that serves it."""
from app import app  # noqa: F401
from app import main as _serve


def main() -> None:
    """Serve kernel_env (and /web with ENABLE_WEB_INTERFACE=true); see `python app.py --help`."""
    _serve()


if __name__ == "__main__":
    main()
