"""Encoder-decoder models: T5-likes, BART-likes, Whisper, ProphetNet, T5Gemma 2."""
