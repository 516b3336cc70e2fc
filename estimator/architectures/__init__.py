"""One module per architecture family builder, by kind (decoder-only, encoder-only, encoder-decoder, multimodal),
and `dispatch`, which picks a config's family and builder and assembles composites."""
