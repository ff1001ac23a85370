from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_json, write_table
    from synthrisk.utility import utility
    from synthrisk.workflow import upstream_failure, write_failed_run

    wc = snakemake.wildcards
    key = {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed)}
    failure = upstream_failure(snakemake.input.status)
    if failure:
        write_failed_run(key, failure, snakemake.output.efficacy, snakemake.output.summary,
                         ["target", "metric", "synthetic", "real", "ratio"])
    else:
        result = utility(read_table(snakemake.input.real), read_table(snakemake.input.synthetic),
                         read_table(snakemake.input.holdout), load_schema(snakemake.input.schema), seed=int(wc.seed))
        print(result.efficacy.to_string(index=False))
        print(result.fidelity)
        write_table(result.efficacy, snakemake.output.efficacy)
        write_json({**key, **result.to_json(), "status": "ok", "error": None}, snakemake.output.summary)
