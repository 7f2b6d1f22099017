"""The oracle suite's machinery: the same scenario against kube-apiserver and draplane, outputs compared.

``scenario`` reads the YAML scenarios, ``runner`` plays one against a target,
``normalise`` takes out what legitimately differs between two servers,
``compare`` diffs the two and applies ``docs/compatibility.md``'s list of
known differences, and ``targets`` starts the servers. tests/oracle/README.md
says how to add a scenario.
"""
