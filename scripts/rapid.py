from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_json, write_table
    from synthrisk.rapid import rapid
    from synthrisk.rapid.core import DEFAULT_NULL_REFITS
    from synthrisk.workflow import upstream_failure, write_failed_run

    wc, settings = snakemake.wildcards, snakemake.params.settings
    key = {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed),
           "attacker": wc.attacker, "sensitive": wc.sensitive}
    failure = upstream_failure(snakemake.input.status)
    if failure:
        write_failed_run(key, failure, snakemake.output.records, snakemake.output.summary, ["row_id", "score", "at_risk"])
    else:
        try:
            result = rapid(
                read_table(snakemake.input.real), read_table(snakemake.input.synthetic),
                load_schema(snakemake.input.schema), wc.sensitive, attacker=wc.attacker,
                tau=settings.get("tau", 0.3), epsilon=settings.get("epsilon", 0.1),
                error=settings.get("error", "relative"), n_trees=settings.get("n_trees", 500),
                n_permutations=settings.get("permutations", 199), seed=int(wc.seed), n_jobs=snakemake.threads,
                null_refits=settings.get("null_refits", DEFAULT_NULL_REFITS),
            )
        except Exception as exc:  # noqa: BLE001 - one failing attacker never stops the others
            import traceback

            traceback.print_exc()
            write_failed_run(key, f"{type(exc).__name__}: {exc}", snakemake.output.records,
                             snakemake.output.summary, ["row_id", "score", "at_risk"])
        else:
            print(f"RAPID = {result.rapid:.4f} [{result.ci_low:.4f}, {result.ci_high:.4f}], p = {result.p_value}")
            write_table(result.records, snakemake.output.records)
            write_json({**key, **result.to_json(), "status": "ok", "error": None,
                        "attribution": result.attribution.to_dict("records")}, snakemake.output.summary)
