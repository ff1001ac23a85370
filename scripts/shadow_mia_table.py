from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.io import read_table
    from synthrisk.shadow_mia import stage

    blocks = {}
    for path in snakemake.input.blocks:  # results/shadow_mia/{generator}/{role}/block{b}.parquet
        generator, role = path.split("/")[-3:-1]
        blocks.setdefault((generator, role), []).append(read_table(path))
    per_target, generators = stage.gather(blocks, read_table(snakemake.input.plan), snakemake.params.settings)
    print(per_target.to_string())
    stage.write(per_target, generators, snakemake.params.settings, snakemake.params.tables,
                snakemake.output.auc, snakemake.output.vulnerable)
    print(stage.summary_line(generators))
