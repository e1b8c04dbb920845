"""A tiny random M2M100 (d_model 32, 2+2 layers) with a real SentencePiece tokenizer, built from scratch.

No translation weights ship in any package, so tests and the translation benchmark exercise the real
transformers and CTranslate2 code paths on this model (recipe in OFFLINE.md). Its output is nonsense
but deterministic.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

SENTENCES = [
    "Der Stadtrat hat am Dienstag den Bau von drei neuen Grundschulen genehmigt.",
    "Le conseil municipal a approuvé mardi la construction de trois écoles.",
    "The city council approved the construction of three new schools on Tuesday.",
    "Die Zentralbank hat ihren Leitzins angehoben, um die Inflation zu bremsen.",
    "La banque centrale a relevé son taux directeur pour freiner l'inflation.",
    "The central bank raised its key interest rate to curb inflation.",
]


def build_tiny_m2m(folder: Path) -> Path:
    """Train the tokenizer, build and save a random M2M100 in `folder/model`; returns that folder."""
    import sentencepiece as spm
    import torch
    from transformers import (
        M2M100Config,
        M2M100ForConditionalGeneration,
        M2M100Tokenizer,
    )
    from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 10), encoding="utf-8")
    logging.getLogger("sentencepiece").setLevel(logging.WARNING)
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / "spm"), vocab_size=120, model_type="bpe",
        character_coverage=1.0, minloglevel=2,
    )
    pieces = spm.SentencePieceProcessor(model_file=str(folder / "spm.model"))
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for index in range(pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(index), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = M2M100Tokenizer(
        vocab_file=str(folder / "vocab.json"),
        spm_file=str(folder / "spm.model"),
        additional_special_tokens=[f"__{code}__" for code in FAIRSEQ_LANGUAGE_CODES["m2m100"]],
    )
    config = M2M100Config(
        vocab_size=len(tokenizer) + tokenizer.num_madeup_words,  # CTranslate2 pads with madeupwords
        d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    )
    torch.manual_seed(0)
    model = M2M100ForConditionalGeneration(config)
    target = folder / "model"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target
