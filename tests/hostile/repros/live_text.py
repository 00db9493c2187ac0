"""An error text that would be live in a report (issue 36): a mention, an issue reference,
a link, an image, HTML that breaks out of an attribute."""

from suite import Choice, Reproducer

TEXT = (
    "failed in @kernel_name, ping @maintainer, see #1234 and GH-99, "
    "![x](https://evil.example/x.png) [click](https://evil.example) "
    "\"'><img src=x onerror=alert(1)>"
)

REPRO = Reproducer(
    id="hostile-live-text",
    title="a reproducer whose error text is markup",
    family="hostile",
    params=(Choice("n", (0,)),),
    configs={"one": [{"n": 0}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    raise RuntimeError(TEXT)
