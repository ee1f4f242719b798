"""What an operator runs beside the game: library functions behind the command line's
housekeeping commands (issue 29), one module each, the CLI only parsing their arguments."""
