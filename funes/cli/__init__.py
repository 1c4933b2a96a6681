"""Thin command modules: argument parsing, output formatting, exit codes."""
