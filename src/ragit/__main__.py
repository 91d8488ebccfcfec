"""`python -m ragit` is the same program as `ragit`."""

from ragit.cli.main import main

if __name__ == "__main__":
    main()
