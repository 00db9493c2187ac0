"""The ``triton.compile`` call of each release: the one home of its ``ASTSource`` forms.

Standard library only (triton imported when called): the engine compiles through it
(:func:`suite.tritonc.compile_kernel`) and every ``repro.py`` carries :func:`ast_source`'s
text verbatim (``templates/repro_compile.py.j2``), so the two cannot disagree. Its
arguments: ``signature``, the non-constexpr arguments' types; ``constexprs``, the values;
``attrs``, ``[[attribute, value], ...]`` by argument name (``tt.divisibility`` 16,
``tt.equal_to`` 1). 3.0 and 3.1 key everything by position.
"""


def ast_source(fn, signature, constexprs, attrs):
    """ASTSource in the installed release's form: constexprs= (3.3 on), AttrsDescriptor (3.2)."""
    from triton.backends import compiler
    from triton.compiler import ASTSource

    at = {name: i for i, name in enumerate(fn.arg_names)}
    hints = {at[n]: value for n, props in attrs.items() for _, value in props}
    if "constexprs" in ASTSource.__init__.__code__.co_varnames:
        types = {n: "constexpr" if n in constexprs else signature.get(n, "constexpr") for n in at}
        by_path = {(at[n],): props for n, props in attrs.items() if n not in constexprs}
        return ASTSource(fn, types, constexprs=constexprs, attrs=by_path)
    if hasattr(compiler, "AttrsDescriptor"):
        return ASTSource(fn, signature, constexprs, compiler.AttrsDescriptor.from_hints(hints))
    from triton.compiler.compiler import AttrsDescriptor

    ones, divisible = ([i for i, v in hints.items() if v == h] for h in (1, 16))
    positional = {at[n]: t for n, t in signature.items()}
    constants = {at[n]: v for n, v in constexprs.items()}
    return ASTSource(fn, positional, constants, AttrsDescriptor(tuple(divisible), tuple(ones)))
