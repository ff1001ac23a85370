from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.measures import configured_measures

    measure = configured_measures(snakemake.config)[snakemake.params.measure]
    measure.summarise(list(snakemake.params.runs), snakemake.params.tables, snakemake.params.figures,
                      measure.settings(snakemake.config.get(measure.name)))
