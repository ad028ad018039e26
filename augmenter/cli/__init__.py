"""Command-line interface: `augmenter chat`."""
