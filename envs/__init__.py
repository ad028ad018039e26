"""Gymnasium user-simulator environments for training policies (installed as `augmenter.envs`).

Not built yet: the environment, user simulators and REINFORCE training are issue #4.
"""
