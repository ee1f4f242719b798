"""The built-in rulesets (rules 101-215), one folder per language: package data."""
