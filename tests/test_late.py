"""Late chunking against a hand computation from the model's own token embeddings."""
import numpy as np
import pytest

from vectrixdb.embedding import get_embedder
from vectrixdb.late import late_vectors, late_vectors_many, token_embeddings

TEXT = ("Uber connects riders and drivers. The platform launched in 2010 in San Francisco. "
        "Freight matches shippers with carriers. Delivery brings food from restaurants.")


def test_a_chunk_vector_is_the_mean_of_its_tokens_read_in_the_whole_document():
    import torch

    emb = get_embedder()
    spans = [(0, 33), (34, 84), (85, len(TEXT))]
    got = late_vectors(emb, TEXT, spans)
    transformer = emb.model[0]
    tok = transformer.tokenizer
    enc = tok(TEXT, return_offsets_mapping=True)  # [CLS] ... [SEP], the whole text in one window
    with torch.no_grad():
        hidden = transformer.auto_model(input_ids=torch.tensor([enc["input_ids"]])).last_hidden_state[0].numpy()
    offsets = np.array(enc["offset_mapping"])
    for row, (start, end) in enumerate(spans):
        mine = [i for i, (a, b) in enumerate(offsets) if b > a and start <= a < end]  # special tokens have (0, 0)
        mean = hidden[mine].mean(axis=0)
        assert np.allclose(got[row], mean / np.linalg.norm(mean), atol=1e-5)
    naive = emb.encode([TEXT[a:b] for a, b in spans])
    assert not np.allclose(got, naive, atol=1e-3)  # context changed the vectors


@pytest.mark.slow
def test_a_long_document_is_read_in_overlapping_windows_with_every_token_once():
    emb = get_embedder()
    long_text = " ".join(f"Sentence {i} talks about topic {i % 7}." for i in range(200))
    tokens, offsets = token_embeddings(emb.model, long_text)
    assert len(tokens) == len(offsets) > 256 and not np.any(np.all(tokens == 0, axis=1))
    vecs = late_vectors(emb, long_text, [(0, 500), (500, 1000), (len(long_text) - 300, len(long_text))])
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_a_model_that_pools_its_first_token_is_refused(tmp_path):
    from sentence_transformers import SentenceTransformer, models

    from vectrixdb.embedding import bundled_model_path

    base = SentenceTransformer(bundled_model_path(), device="cpu")
    cls = SentenceTransformer(modules=[base[0], models.Pooling(384, pooling_mode="cls"), models.Normalize()], device="cpu")
    folder = tmp_path / "cls"
    cls.save(str(folder))
    with pytest.raises(ValueError, match="pools 'cls', not the mean of its tokens"):
        late_vectors(get_embedder(str(folder)), TEXT, [(0, 10)])


@pytest.mark.slow
def test_documents_batched_together_get_the_vectors_they_get_alone():
    emb = get_embedder()
    long_text = " ".join(f"Sentence {i} talks about topic {i % 7}." for i in range(120))
    items = [(TEXT, [(0, 33), (34, len(TEXT))]), (long_text, [(0, 400), (400, len(long_text))]), ("", [])]
    together = late_vectors_many(emb, items, batch_size=3)
    for (text, spans), got in zip(items, together):
        alone = late_vectors(emb, text, spans)
        assert got.shape == (len(spans), emb.dim) and np.allclose(got, alone, atol=1e-5)
