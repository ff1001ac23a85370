from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_json, write_table
    from synthrisk.mia import membership_attack
    from synthrisk.workflow import upstream_failure, write_failed_run

    wc, settings = snakemake.wildcards, snakemake.params.settings
    key = {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed)}
    failure = upstream_failure(snakemake.input.status)
    if failure:
        write_failed_run(key, failure, snakemake.output.records, snakemake.output.summary, ["row_id", "member", "distance"])
    else:
        aux = read_table(snakemake.input.aux)
        kwargs = {"thresholds": settings["thresholds"]} if "thresholds" in settings else {}
        result = membership_attack(
            read_table(snakemake.input.members), read_table(snakemake.input.non_members),
            read_table(snakemake.input.synthetic), load_schema(snakemake.input.schema),
            aux=aux if len(aux) else None, realistic=len(aux) > 0,
            aux_member_fraction=settings.get("aux_member_fraction", 0.5), seed=int(wc.seed), **kwargs,
        )
        print(f"AUC {result.true_distribution['auc']:.4f}")
        write_table(result.records, snakemake.output.records)
        write_json({**key, **result.to_json(), "roc": result.roc(), "status": "ok", "error": None},
                   snakemake.output.summary)
