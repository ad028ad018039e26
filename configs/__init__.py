"""Hydra configuration groups (installed as `augmenter.configs`)."""
