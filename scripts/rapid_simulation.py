from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import write_table_formats
    from synthrisk.measures import measure
    from synthrisk.rapid.simulation import dependence_study
    from synthrisk.rapid.summary import plot_simulation

    s = snakemake.params.simulation
    study = dependence_study(
        load_schema(snakemake.input.schema), strengths=s["strengths"], attackers=s["attackers"],
        generator_spec=snakemake.params.generator_spec, n=s["n"], seeds=s["seeds"],
        settings=measure("rapid").settings(snakemake.params.rapid),
    )
    study.to_csv(snakemake.output.study, index=False)
    at_default = study[study["is_default_threshold"]]
    table = (at_default.groupby(["sensitive", "attacker", "strength"])["rapid"]
             .agg(rapid_mean="mean", rapid_sd="std", n_seeds="count").reset_index())
    write_table_formats(table, snakemake.output.table.removesuffix(".csv"))
    plot_simulation(study, snakemake.output.by_strength, snakemake.output.curves)
