from synthrisk.workflow import logged

with logged(snakemake):
    import pyarrow.parquet as pq

    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_json, write_table
    from synthrisk.mia import membership_attack
    from synthrisk.mia.attacks import DEFAULT_MIN_ATTACK_MEMBERS
    from synthrisk.workflow import upstream_failure, write_failed_run

    wc, settings = snakemake.wildcards, snakemake.params.settings
    key = {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed)}
    failure = upstream_failure(snakemake.input.status)
    if failure:
        write_failed_run(key, failure, snakemake.output.records, snakemake.output.summary, ["row_id", "member", "distance"])
    else:
        aux = read_table(snakemake.input.aux)
        kwargs = {"thresholds": settings["thresholds"]} if "thresholds" in settings else {}
        # The members were drawn from the rows of real.parquet (synthrisk.data.split), so that table is
        # the population of El Emam et al.'s sampling fraction t = n_train / N.
        population_size = pq.read_metadata(snakemake.input.real).num_rows
        result = membership_attack(
            read_table(snakemake.input.members), read_table(snakemake.input.non_members),
            read_table(snakemake.input.synthetic), load_schema(snakemake.input.schema),
            aux=aux if len(aux) else None, realistic=len(aux) > 0,
            aux_member_fraction=settings.get("aux_member_fraction", 0.5), seed=int(wc.seed),
            member_share=settings.get("member_share", "sampling_fraction"), population_size=population_size,
            min_attack_members=settings.get("min_attack_members", DEFAULT_MIN_ATTACK_MEMBERS), **kwargs,
        )
        summary = result.summary
        print(f"attack set: {summary['n_attack']} records, member share {summary['member_share']:.4f} "
              f"(target {summary['member_share_target']}, {summary['member_share_rule']}); "
              f"aux members {summary['n_aux_members']} (disjoint from the scored members)")
        print(f"AUC {result.true_distribution['auc']:.4f}")
        write_table(result.records, snakemake.output.records)
        write_json({**key, **result.to_json(), "roc": result.roc(), "status": "ok", "error": None},
                   snakemake.output.summary)
