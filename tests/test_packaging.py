import subprocess
import sys

from augmenter.tasks.dstc11 import load_turns
from conftest import DSTC11


def test_only_augmenter_is_a_top_level_package(tmp_path):
    code = (
        "import importlib.util as u; "
        "print([n for n in ('policies', 'envs', 'configs') if u.find_spec(n)]); "
        "import augmenter.policies, augmenter.envs, augmenter.configs; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["[]", "ok"], out.stderr


def test_dstc11_dev_instances():
    all_turns = load_turns(DSTC11 / "dev")
    seeking = load_turns(DSTC11 / "dev", knowledge_seeking_only=True)
    assert len(all_turns) == 3130 and len(seeking) == 1569  # data README
    first = seeking[0]
    assert first.q == "Are their bathrooms adequately sanitized?" and first.history[-1].speaker == "S"
    assert first.labels[0]["entity_id"] == 20 and first.references[0].startswith("Yes, most of the guests")
    a = load_turns(DSTC11 / "dev", knowledge_seeking_only=True, limit=20, seed=0)
    b = load_turns(DSTC11 / "dev", knowledge_seeking_only=True, limit=20, seed=0)
    assert [x.id for x in a] == [x.id for x in b] and len(a) == 20 and all(x.knowledge_seeking for x in a)
