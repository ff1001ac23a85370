from synthrisk.study.workflow import logged

with logged(snakemake):
    from pathlib import Path

    from synthrisk.data import load_schema
    from synthrisk.measures import configured_measures
    from synthrisk.measures.runner import generator_in_workflow, plan_runs, run_synthetic_dataset

    def output_stem(measure):
        """results/{measure}/{dataset}/{generator}/seed{seed}: the run directory of a measure with units,
        the stem of its .parquet / .json pair otherwise (workflow/rules/common.smk, measure_job_outputs)."""
        if measure.has_units:
            return Path(snakemake.output[measure.name])
        return Path(snakemake.output[f"{measure.name}_summary"]).with_suffix("")

    wc = snakemake.wildcards
    measures = {name: (m, m.settings(snakemake.config.get(name)))
                for name, m in configured_measures(snakemake.config).items()}
    paths = {name: snakemake.input[name] for name in ("members", "holdout", "aux", "real", "synthetic",
                                                     "status", "schema")}
    runs = plan_runs(measures, load_schema(paths["schema"]), output_stem)
    in_hand = generator_in_workflow(wc.generator, snakemake.config["generators"].get(wc.generator),
                                    snakemake.params.repo)
    run_synthetic_dataset(runs, paths, {"dataset": wc.dataset, "generator": wc.generator, "seed": int(wc.seed)},
                          log_of=lambda run: snakemake.log[run.measure.name], generator=in_hand)
