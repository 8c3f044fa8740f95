"""`python -m hipport` runs the command-line interface."""

from hipport.cli import main

if __name__ == "__main__":
    main()
