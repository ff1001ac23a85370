from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.epsilon_audit import stage

    w = snakemake.wildcards
    stage.block_job(snakemake.input.real, snakemake.input.schema, snakemake.params.settings, w.generator,
                    w.epsilon, w.world, w.block, snakemake.output[0])
