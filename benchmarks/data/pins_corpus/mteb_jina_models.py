from mteb.model_meta import ModelMeta

paraphrase_multilingual_MiniLM_L12_v2 = ModelMeta(
    name="jinaai/jina-embeddings-v2-base-en",
    languages=["eng_Latn"],
    open_source=True,
    revision="f84569a8c478c7bb2ea3bc187034859870940deb", 
    release_date="2023-10-30",  # release date of paper
)
