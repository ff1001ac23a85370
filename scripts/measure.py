from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.measures import configured_measures
    from synthrisk.measures.runner import run_measure

    measure = configured_measures(snakemake.config)[snakemake.params.measure]
    wc = snakemake.wildcards
    unit = wc.get("unit")
    key = {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed),
           **(measure.unit_key(unit) if unit else {})}
    paths = {name: snakemake.input[name] for name in ("members", "non_members", "aux", "real", "synthetic",
                                                     "status", "schema")}
    run_measure(measure, measure.settings(snakemake.config.get(measure.name)), paths, key, unit,
                snakemake.output.records, snakemake.output.summary)
