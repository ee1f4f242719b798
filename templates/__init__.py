"""The mail templates, one folder per language: package data."""
