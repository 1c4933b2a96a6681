"""Which fold a labelled repository belongs to: five cross-validation folds, and a frozen test fold.

The frozen fold is whole repositories that no training, tuning or threshold choice ever sees;
`bench/quality.py` scores it separately. It is drawn only from repositories added after the first
labelled batch (`FIRST_BATCH`), whose questions already trained shipped weights: about one new
repository in five, by a hash of its name, so the split is stable as the set grows.
"""

from __future__ import annotations

import hashlib

FOLDS = 5

# The repositories of the first labelled batch (2026-11-30): the shipped ranker was trained on
# them, so they can never be a held-out test.
FIRST_BATCH = frozenset(
    """
    0h-n0/local-voice-assistant-codex AlexandreVassard/will-it-rain Beep206/CyberVPN
    DRMacIver/claude-reliability EntityProcess/agentv FSM1/cipher-box HAHVAC/hermes-agent-backup
    Hoper-J/cpolar-connect MikeLockz/el-dorado-tanstack Monotoba/OpenPrintKit
    OcarCampos/hermes-backup PackmindHub/context-evaluator Quelklef/shell-ws
    SamuelRodriguess/acmebank-service ShamsiievDmytro/entire-bmad Shyaar/beam_v1
    SproutSeeds/coda SuriyaGB/hermes-trading-agent- andrewcarterman-ops/andre-ai-harness
    aneesh199608/dslint anmol0b/Trezo-Ai ansu555/omeswap-templet arnemohr/funke
    augustoFranke/Ta-la blackgirlbytes/entire-token-costs-benchmark-tests
    blackgirlbytes/planetfall-seed-signalkit bricerising/specify-poker codehs/jack-hermes
    codyborders/pup-mcp d-kimuson/claude-code-viewer dreyer-thomas/TravelBlogs entireio/cli
    eriktobben/hermes-backup joechong88/HermesPA juliuss1907/knowledge-base
    kunalcode12/openclaw_agent marcpadz/dexter-v3 mode89/welpy pinion05/agent-complex-task
    pinouchon/rtchess sanand0/scripts sgan0420/blockchain-dex-events
    shastrysamarth/01-campaign-audit therealjhay/Soul uzaxirr/raze
    """.split()
)


def frozen(repo: str) -> bool:
    """Whether a repository's questions (and transcripts) belong to the frozen test fold.
    Absent questions (``absent:<id>`` groups) follow the repository they were written for."""
    if repo in FIRST_BATCH or repo.startswith("absent:"):
        return False
    return int(hashlib.sha1(f"frozen/{repo}".encode()).hexdigest(), 16) % 5 == 0


def fold_of(repo: str, k: int = FOLDS) -> int:
    """The cross-validation fold of a repository that is not frozen."""
    return int(hashlib.sha1(repo.encode()).hexdigest(), 16) % k
