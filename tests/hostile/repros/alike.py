"""Two case ids that write alike as a folder name (issue 36): ``a b`` and ``a_b``."""

from suite import Choice, Reproducer

REPRO = Reproducer(
    id="hostile-alike",
    title="two cases whose ids make one folder name",
    family="hostile",
    params=(Choice("name", ("a b", "a_b")),),
    configs={"both": [{"name": "a b"}, {"name": "a_b"}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    print(f"output of <{case['name']}>")
    raise RuntimeError(f"fails as <{case['name']}>")
