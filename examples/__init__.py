"""The README's example games (rules 201-209 in play), and the script that writes them."""
